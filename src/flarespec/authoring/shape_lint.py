"""``spec lint`` over shapes: every parsed document declares one, every member read is declared.

* ``spec.no-shape`` (error): a document whose loader gives JSON values (``json``, ``sse``)
  names no shape, so nothing but what some rule happens to touch is checked.
* ``spec.undeclared-member`` (error): a reference (a rule's ``given``, a condition, an
  argument, an iteration's ``over``, a document's ``path_from`` or path placeholder, an
  identity, the metric) reads a member that the shape of what it reads does not declare,
  so the rule reading it could meet any type there. A member is declared when the object's
  node names it in ``members`` or gives every member a ``values`` shape; an array element
  when the node has ``items``. A reference into an iteration's element uses the element's
  shape (the shape at the iteration's ``over``). Selections the lint cannot follow
  statically (filters, unions, recursive descent, a key filled per binding into an object
  without ``values``) are not judged.
"""

from __future__ import annotations

from typing import Any, Iterator

from flarespec.engine.paths import WILDCARD, PointerTemplate
from flarespec.engine.refs import Ref, refs_in
from flarespec.spec.compile import CompiledSpec
from flarespec.spec.errors import ERROR, SpecIssue, did_you_mean

NO_SHAPE = "spec.no-shape"
UNUSED_SHAPE = "spec.unused-shape"
# loaders whose values are JSON values (an SSE stream's data parsed as JSON, the records of
# JSON Lines, a CSV table's rows: its shape also says which columns hold numbers): each such
# document declares its shape; the others (bytes, directory, text, prometheus) give the
# loader's own checked structure
JSON_LOADERS = frozenset({"json", "jsonl", "csv", "sse"})
UNDECLARED_MEMBER = "spec.undeclared-member"
_UNKNOWN = object()  # a place whose shape cannot be told statically: not judged


def shape_issues(compiled: CompiledSpec) -> list[SpecIssue]:
    data = compiled.resolved.data
    issues = []
    for name, document in compiled.documents.items():
        if document.loader in JSON_LOADERS and document.shape is None:
            source = data["documents"][name]
            issues.append(SpecIssue(
                f"document {name!r} ({document.loader}) declares no shape: declare the JSON "
                f"type of every member its rules read (shape: NAME, an entry of shapes; "
                f"docs/spec-language.md#shapes)", getattr(source, "mark", None), NO_SHAPE,
                ERROR))
    own = compiled.resolved.chain[0].data.get("shapes") or {}
    issues.extend(issue for issue, name in _unused_shapes(data) if name in own)
    elements = _element_nodes(compiled)
    seen = set()
    for ref, mark, fields in _references(compiled):
        for problem in _undeclared(compiled, elements, ref, fields):
            if (ref.source, problem) not in seen:
                seen.add((ref.source, problem))
                issues.append(SpecIssue(f"{ref.source!r} reads {problem}", mark,
                                        UNDECLARED_MEMBER, ERROR))
    return issues


def _unused_shapes(data: dict) -> list[tuple[SpecIssue, str]]:
    """``spec.unused-shape`` (error) with the shape's name: a named shape no document
    reaches. A child's ``shapes: {memory_reprot: {members: ...}}`` would otherwise add a
    shape nothing checks, and the member it meant to require would go unchecked, silently.
    Reported for the shapes the linted file itself writes (an inherited shape of a dropped
    document is the parent's)."""
    named = data.get("shapes") or {}
    reached: set[str] = set()
    pending = [d.get("shape") for d in (data.get("documents") or {}).values()
               if isinstance(d, dict) and isinstance(d.get("shape"), str)]
    while pending:
        name = pending.pop()
        if name in reached or name not in named:
            continue
        reached.add(name)
        pending.extend(_named_in(named[name], named))
    return [(SpecIssue(f"shape {name!r} is used by no document (directly or through another "
                       f"shape){did_you_mean(name, sorted(reached))}: a member it declares is "
                       f"never checked", getattr(named, "key_marks", {}).get(name),
                       UNUSED_SHAPE, ERROR), name) for name in named if name not in reached]


def _named_in(node, named) -> Iterator[str]:
    """The names of other named shapes a node refers to."""
    pending = [node]
    while pending:
        node = pending.pop()
        if isinstance(node, str):
            if node in named:
                yield node
        elif isinstance(node, dict):
            if isinstance(node.get("use"), str):
                yield node["use"]
            pending.extend((node.get("members") or {}).values()
                           if isinstance(node.get("members"), dict) else [])
            pending.extend(node[key] for key in ("items", "values") if key in node)


# ---------------------------------------------------------------------- where refs are

def _references(compiled: CompiledSpec) -> Iterator[tuple[Ref, Any, tuple]]:
    """(reference, mark, member paths a formula reads below it) of every reference."""
    for ref, mark in _plain_references(compiled):
        yield ref, mark, ()
    data = compiled.resolved.data
    marks = _rule_marks(data)
    for rule in compiled.rules:
        formula = rule.arg.get("compiled") if rule.kind is not None and \
            rule.kind.name == "formula" and isinstance(rule.arg, dict) else None
        if formula is not None and rule.given is not None:
            yield rule.given, marks.get(rule.id), tuple(formula.fields)


def _rule_marks(data) -> dict:
    return {rule.get("id"): mark for rule, mark in
            zip(data.get("rules") or [], getattr(data.get("rules"), "item_marks", []))}


def _plain_references(compiled: CompiledSpec) -> Iterator[tuple[Ref, Any]]:
    data = compiled.resolved.data
    for name, iteration in compiled.iterations.items():
        yield iteration.over, _mark(data["iterations"][name])
    for name, document in compiled.documents.items():
        mark = _mark(data["documents"][name])
        if document.path_from is not None:
            yield document.path_from, mark
        if document.path is not None:
            yield from _template_refs(document.path, mark)
    rule_marks = _rule_marks(data)
    for rule in compiled.rules:
        mark = rule_marks.get(rule.id)
        for part in (rule.given, rule.when, rule.arg):
            yield from _in(part, mark)
    for identity in compiled.identities.values():
        yield from _in(identity, _mark(data.get("identities")))
    if compiled.metric is not None:
        metric, mark = compiled.metric, _mark(data.get("metric"))
        for part in (metric.given, metric.when, metric.args):
            yield from _in(part, mark)
    if compiled.applies_to is not None:
        yield from _in(compiled.applies_to, _mark(data.get("applies_to")))


def _mark(source):
    return getattr(source, "mark", None)


def _in(value, mark) -> Iterator[tuple[Ref, Any]]:
    for ref in refs_in(value):
        yield ref, mark


def _template_refs(template, mark) -> Iterator[tuple[Ref, Any]]:
    return _in(template, mark)


# ---------------------------------------------------------------------- walking shapes

def _element_nodes(compiled: CompiledSpec) -> dict[str, Any]:
    """Iteration name -> the shape node of its elements (``_UNKNOWN`` when not told)."""
    found: dict[str, Any] = {}

    def node_of(name: str):
        if name not in found:
            found[name] = _UNKNOWN  # a cycle cannot be compiled; guard anyway
            iteration = compiled.iterations[name]
            start = _start(compiled, found, iteration.over, node_of)
            found[name] = _UNKNOWN if start is _UNKNOWN else \
                _walk(start, reference_steps(iteration.over))[0]
        return found[name]
    for name in compiled.iterations:
        node_of(name)
    return found


def _start(compiled, elements, ref: Ref, node_of=None):
    if ref.metadata:
        return _UNKNOWN
    if ref.target in compiled.documents:
        shape = compiled.documents[ref.target].shape
        return shape.node if shape is not None else _UNKNOWN
    if ref.target in compiled.iterations:
        return node_of(ref.target) if node_of else elements.get(ref.target, _UNKNOWN)
    return _UNKNOWN  # constants


def _undeclared(compiled, elements, ref: Ref, fields: tuple = ()) -> Iterator[str]:
    """The undeclared member the reference reads (if any), then, below what it selects,
    each undeclared member a formula's field path reads (``usage.total_tokens``)."""
    start = _start(compiled, elements, ref)
    steps = reference_steps(ref) if start is not _UNKNOWN else None
    if steps is None:
        return
    node, problem = _walk(start, steps)
    if problem is not None:
        yield problem
        return
    for field in fields:
        path = [WILDCARD if part == "*" else int(part) if part.isdigit() else part
                for part in field.split(".")] if field not in ("", "$") else []
        found = _walk(node, path)[1] if node is not _UNKNOWN else None
        if found is not None:
            yield f"{found} (formula field {field})"


def reference_steps(ref: Ref) -> list | None:
    """The reference's selector as steps: a name, an index, ``_ALL`` for a wildcard or a
    slice, ``_UNKNOWN`` for a key filled per binding; None when it cannot be followed."""
    if ref.jsonpath is not None:
        steps = ref.jsonpath.steps
        if steps is None:
            return None
        return [WILDCARD if isinstance(step, slice) else step for step in steps]
    pointer: PointerTemplate | None = ref.pointer
    if pointer is None:
        return None
    steps = []
    for segment in pointer.segments:
        if segment.filter_value is not None:
            return None
        if segment.key.placeholders:
            steps.append(_UNKNOWN)
            continue
        text = segment.key.source
        steps.append(int(text) if text.lstrip("-").isdigit() else text)
    return steps


def _walk(node, steps: list) -> tuple[Any, str | None]:
    """(the node at the end, or _UNKNOWN; the first undeclared step, described, or None)."""
    where = "$"
    for step in steps:
        if node is _UNKNOWN or not isinstance(node, dict):
            return _UNKNOWN, None
        if isinstance(step, str):
            members = node.get("members") or {}
            if step in members:
                node = members[step]
            elif "values" in node:
                node = node["values"]
            elif _is(node, "array") and not _is(node, "object"):
                return _UNKNOWN, f"member {step!r} of {where}, which its shape declares an array"
            elif _declares_nothing(node):
                return _UNKNOWN, None
            else:
                return _UNKNOWN, (f"member {step!r} of {where}, which its shape does not "
                                  f"declare (declared: {', '.join(members) or 'none'})")
            where = f"{where}.{step}"
        else:  # an index, a wildcard, or a key filled per binding
            if "items" in node:
                node = node["items"]
            elif "values" in node:
                node = node["values"]
            elif step is _UNKNOWN and "members" in node:
                return _UNKNOWN, None  # a member chosen per binding: not told statically
            elif _declares_nothing(node):
                return _UNKNOWN, None
            else:
                return _UNKNOWN, f"the elements of {where}, which its shape does not declare " \
                                 f"(no items)"
            where = f"{where}[*]"
    return node, None


def _is(node: dict, name: str) -> bool:
    declared = node.get("type", "any")
    names = [declared] if isinstance(declared, str) else declared
    return name in names


def _declares_nothing(node: dict) -> bool:
    """A node of type any (or with no type) says nothing about what is inside: reading into
    it is reading an undeclared member only when the node is an object or array type."""
    return not (_is(node, "object") or _is(node, "array"))
