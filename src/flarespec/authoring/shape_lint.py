"""``spec lint`` over shapes: every parsed document declares one, every member read is declared.

* ``spec.no-shape`` (error): a document whose loader gives JSON values (``json``, ``sse``)
  names no shape, so nothing but what some rule happens to touch is checked.
* ``spec.undeclared-member`` (error): a reference (a rule's ``given``, a condition, an
  argument, an iteration's ``over``, a document's ``path_from``, ``from``, path placeholder, an
  identity, the metric) reads a member that the shape of what it reads does not declare,
  so the rule reading it could meet any type there. A member is declared when the object's
  node names it in ``members`` or gives every member a ``values`` shape; an array element
  when the node has ``items``. A reference into an iteration's element uses the element's
  shape (the shape at the iteration's ``over``). A filter (``[?@.error == null]``, a
  pointer's ``[key=value]``) selects elements as ``[*]`` does; a union (``[0,1]``,
  ``['a','b']``) is each of its selectors. What the lint cannot follow statically (what lies
  below a descendant segment ``..``, a key filled per binding into an object without
  ``values``) is not judged: no error is made up there.
"""

from __future__ import annotations

from typing import Any, Iterator

from flarespec.engine.path_templates import JsonPathTemplate
from flarespec.engine.paths import WILDCARD, PointerTemplate
from flarespec.engine.refs import Ref, refs_in
from flarespec.compiler.compile import CompiledSpec
from flarespec.compiler.errors import ERROR, SpecIssue, did_you_mean

NO_SHAPE = "spec.no-shape"
UNUSED_SHAPE = "spec.unused-shape"
# loaders whose values are JSON values (an SSE stream's data parsed as JSON, the records of
# JSON Lines, a CSV table's rows: its shape also says which columns hold numbers): each such
# document declares its shape; the others (bytes, directory, text, prometheus) give the
# loader's own checked structure
JSON_LOADERS = frozenset({"json", "jsonl", "csv", "sse"})
UNDECLARED_MEMBER = "spec.undeclared-member"
_UNKNOWN = object()  # a place whose shape cannot be told statically: not judged
_DESCENDANT = object()  # a descendant segment's step: what lies below is not followed
_ELEMENT = object()  # a step to an array's elements alone (a slice, a pointer's [key=value])


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
        for ref in (document.path_from, document.from_ref):
            if ref is not None:
                yield ref, mark
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

def _element_nodes(compiled: CompiledSpec) -> dict[str, list]:
    """Iteration name -> the shape nodes its elements may have (one, or one per selector of
    a union; ``[_UNKNOWN]`` when not told)."""
    found: dict[str, list] = {}

    def nodes_of(name: str) -> list:
        if name not in found:
            found[name] = [_UNKNOWN]  # a cycle cannot be compiled; guard anyway
            iteration = compiled.iterations[name]
            starts = _starts(compiled, found, iteration.over, nodes_of)
            segments = _segments(iteration.over)
            found[name] = _distinct(_walk(starts, segments)[0]) if segments is not None \
                else [_UNKNOWN]
        return found[name]
    for name in compiled.iterations:
        nodes_of(name)
    return found


def _distinct(nodes: list) -> list:
    return list({id(node): node for node in nodes}.values())


def _starts(compiled, elements, ref: Ref, nodes_of=None) -> list:
    """The shape nodes of what the reference selects from (``[_UNKNOWN]``: not told)."""
    if ref.metadata:
        return [_UNKNOWN]
    if ref.target in compiled.documents:
        shape = compiled.documents[ref.target].shape
        return [shape.node if shape is not None else _UNKNOWN]
    if ref.target in compiled.iterations:
        return nodes_of(ref.target) if nodes_of else elements.get(ref.target, [_UNKNOWN])
    return [_UNKNOWN]  # constants


def _undeclared(compiled, elements, ref: Ref, fields: tuple = ()) -> Iterator[str]:
    """The undeclared member the reference reads (if any), then, below what it selects,
    each undeclared member a formula's field path reads (``usage.total_tokens``)."""
    segments = _segments(ref)
    if segments is None:
        return
    nodes, problem = _walk(_starts(compiled, elements, ref), segments)
    if problem is not None:
        yield problem
        return
    for field in fields:
        path = [(WILDCARD if part == "*" else int(part) if part.isdigit() else part,)
                for part in field.split(".")] if field not in ("", "$") else []
        found = _walk(_distinct(nodes), path)[1]
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
        steps.append(_pointer_step(segment))
    return steps


def _pointer_step(segment):
    if segment.key.placeholders:
        return _UNKNOWN
    text = segment.key.source
    return int(text) if text.lstrip("-").isdigit() else text


def _segments(ref: Ref) -> list[tuple] | None:
    """The reference's selector as segments for ``_walk``, each a tuple of the steps a
    place may take there (several for a union): a name; an index, or ``_ELEMENT`` for what
    selects an array's elements alone (a slice, a pointer's ``[key=value]``); ``WILDCARD``
    for what selects an array's elements or an object's member values (a wildcard, a
    filter); ``_UNKNOWN`` for a key filled per binding; ``_DESCENDANT`` for a descendant
    segment (not followed). None when there is no selector (metadata)."""
    path = ref.jsonpath if ref.jsonpath is not None else \
        ref.template.probe if ref.template is not None else None
    if path is not None:
        segments = []
        for descendant, selectors in path.segments:
            if descendant:
                segments.append((_DESCENDANT,))
                break  # nothing below is followed
            segments.append(tuple(
                _UNKNOWN if JsonPathTemplate.probe_step(selector) is not None else
                selector if type(selector) in (str, int) else
                _ELEMENT if type(selector) is slice else WILDCARD for selector in selectors))
        return segments
    if ref.pointer is None:
        return None
    return [(_ELEMENT if segment.filter_value is not None else _pointer_step(segment),)
            for segment in ref.pointer.segments]


def _walk(nodes: list, segments: list[tuple]) -> tuple[list, str | None]:
    """From places of the shapes ``nodes``: (the nodes the places selected have,
    ``_UNKNOWN`` for one not told; the first undeclared step, described, or None). Each
    segment holds the steps a place may take there (one, or a union's selectors)."""
    frontier = [(node, "$") for node in nodes]
    for segment in segments:
        following: dict = {}  # one place per node (the first): unions cannot multiply them
        for node, where in frontier:
            for step in segment:
                children, problem = _step(node, step, where)
                if problem is not None:
                    return [_UNKNOWN], problem
                for child in children:
                    following.setdefault(id(child[0]), child)
        frontier = list(following.values())
    return [node for node, _ in frontier], None


def _step(node, step, where: str) -> tuple[list, str | None]:
    """([(a node at ``step`` below ``node``, its place), ...], None), or (_, the problem);
    ``_UNKNOWN`` once nothing can be told (below it, nothing is judged)."""
    unknown = [(_UNKNOWN, where)]
    if node is _UNKNOWN or not isinstance(node, dict) or step is _DESCENDANT:
        return unknown, None
    if isinstance(step, str):
        members = node.get("members") or {}
        if step in members:
            return [(members[step], f"{where}.{step}")], None
        if "values" in node:
            return [(node["values"], f"{where}.{step}")], None
        if _is(node, "array") and not _is(node, "object"):
            return unknown, f"member {step!r} of {where}, which its shape declares an array"
        if _declares_nothing(node):
            return unknown, None
        return unknown, (f"member {step!r} of {where}, which its shape does not declare "
                         f"(declared: {', '.join(members) or 'none'})")
    # an index, an element, a wildcard, or a key filled per binding
    if "items" in node:
        return [(node["items"], f"{where}[*]")], None
    if "values" in node:
        return [(node["values"], f"{where}[*]")], None
    if step is WILDCARD and node.get("members") and _is(node, "object"):
        # every member's value (a wildcard, a filter over an object)
        return [(child, f"{where}.{name}") for name, child in node["members"].items()], None
    if step is _UNKNOWN and "members" in node or _declares_nothing(node):
        return unknown, None  # a member chosen per binding: not told statically
    return unknown, f"the elements of {where}, which its shape does not declare (no items)"


def _is(node: dict, name: str) -> bool:
    declared = node.get("type", "any")
    names = [declared] if isinstance(declared, str) else declared
    return name in names


def _declares_nothing(node: dict) -> bool:
    """A node of type any (or with no type) says nothing about what is inside: reading into
    it is reading an undeclared member only when the node is an object or array type."""
    return not (_is(node, "object") or _is(node, "array"))
