"""``spec lint``: a name a hook reads must be one the spec requires where it reads it.

A hook declares which of its arguments name keys of another argument's value
(``names_in``: ``counter`` names a key of ``after``). When the holder argument is a
reference into a document (``metrics:$.samples``), every name the naming argument gives
(a literal, a list, ``${constant}``s, or values read from an iteration over constants) must
be required at that place by the spec itself:

* a member the document's shape requires there, or
* a key an always-applying error rule selects there: a rule without ``when`` or
  ``optional``, whose ``given`` is that place followed by a literal key or by one
  placeholder of an iteration over constants (``metrics:/samples/{required.name}``),
  so that a missing key is that rule's violation.

Otherwise the name is ``spec.name-not-required`` (an error): renaming a counter in one
constant but not in the other used to check nothing (the hook now fails closed at run time,
so a missed case rejects; lint says it before any packet does).
"""

from __future__ import annotations

from typing import Any, Iterator

from flarespec.authoring.shape_lint import reference_steps
from flarespec.engine.hooks import HOOKS
from flarespec.engine.refs import ArgRef, Ref
from flarespec.engine.values import member_at
from flarespec.spec.compile import CompiledSpec
from flarespec.spec.errors import ERROR, SpecIssue

NAME_NOT_REQUIRED = "spec.name-not-required"


def name_issues(compiled: CompiledSpec) -> list[SpecIssue]:
    data = compiled.resolved.data
    marks = {rule.get("id"): mark for rule, mark in
             zip(data.get("rules") or [], getattr(data.get("rules"), "item_marks", []))}
    own = compiled.resolved.chain[0]
    # an inherited rule reads what the linted spec's constants changed: point there
    own_constants = getattr(own.data, "key_marks", {}).get("constants")
    issues = []
    for rule in compiled.rules:
        hook = HOOKS.get(rule.hook) if rule.hook else None
        if hook is None or not hook.names_in or not isinstance(rule.arg, dict):
            continue
        for naming, holder in hook.names_in.items():
            place = _place(rule.arg.get(holder))
            names = _names(compiled, rule.arg.get(naming))
            if place is None or names is None:
                continue  # not statically known: the hook fails closed at run time
            required = _required(compiled, *place)
            for name in names:
                if name not in required:
                    issues.append(SpecIssue(
                        f"rule {rule.id!r}: {naming} {name!r} is read from "
                        f"{place[0]}:{_shown(place[1])}, but no rule or shape of the spec "
                        f"requires it there (required there: "
                        f"{', '.join(sorted(required)) or 'nothing'}); a renamed name must "
                        f"be renamed everywhere", _mark(compiled, rule.id, marks, own,
                                                        own_constants),
                        NAME_NOT_REQUIRED, ERROR))
    return issues


def _mark(compiled: CompiledSpec, rule_id: str, marks: dict, own, own_constants):
    inherited = compiled.resolved.rule_origin.get(rule_id) not in (None, own.id)
    return own_constants if inherited and own_constants is not None else marks.get(rule_id)


def _shown(steps: list) -> str:
    return "$" + "".join(f".{step}" for step in steps)


def _place(arg) -> tuple[str, list] | None:
    """(document, literal steps) of a holder argument read from a document."""
    if not isinstance(arg, ArgRef) or arg.ref.metadata:
        return None
    steps = reference_steps(arg.ref)  # keys only: a place named statically
    if steps is None or not all(isinstance(step, str) for step in steps):
        return None
    return arg.ref.target, steps


def _names(compiled: CompiledSpec, arg) -> list[str] | None:
    if isinstance(arg, str):
        return [arg]
    if isinstance(arg, list) and all(isinstance(item, str) for item in arg):
        return list(arg)
    if isinstance(arg, ArgRef):
        values = _constant_values(compiled, arg.ref)
        if values is None:
            return None
        flat = [v for value in values for v in (value if isinstance(value, list) else [value])]
        return flat if all(isinstance(v, str) for v in flat) else None
    return None


def _constant_values(compiled: CompiledSpec, ref: Ref) -> list | None:
    """What a reference reads when its target is ``constants`` or an iteration over the
    constants (every element's value); None when it reads evidence."""
    if ref.jsonpath is None:
        return None
    if ref.target == "constants":
        return ref.jsonpath.values(compiled.constants)
    iteration = compiled.iterations.get(ref.target)
    if iteration is None or iteration.over.target != "constants" \
            or iteration.over.jsonpath is None:
        return None
    return [value for element in iteration.over.jsonpath.values(compiled.constants)
            for value in ref.jsonpath.values(element)]


def _required(compiled: CompiledSpec, document: str, steps: list) -> set[str]:
    """The keys the spec requires under ``document`` at ``steps``."""
    required = set(_shape_members(compiled, document, steps))
    for rule in compiled.rules:
        if rule.severity != "error" or rule.when is not None or rule.optional \
                or rule.given is None or rule.given.target != document \
                or rule.kind is None or rule.kind.accepts_empty:
            continue
        required.update(_keys_selected(compiled, rule, steps))
    return required


def _shape_members(compiled: CompiledSpec, document: str, steps: list) -> Iterator[str]:
    spec_document = compiled.documents.get(document)
    node = spec_document.shape.node if spec_document and spec_document.shape else None
    for step in steps:
        node = ((node or {}).get("members") or {}).get(step) if isinstance(node, dict) else None
    for name, child in ((node or {}).get("members") or {}).items():
        if not child.get("optional", False):
            yield name


def _keys_selected(compiled: CompiledSpec, rule, steps: list) -> Iterator[str]:
    ref = rule.given
    if ref.pointer is not None:
        segments = ref.pointer.segments
        if len(segments) <= len(steps) or any(
                segment.filter_value is not None or segment.key.placeholders
                or segment.key.source != step for segment, step in zip(segments, steps)):
            return
        key = segments[len(steps)]
        if key.filter_value is not None:
            return
        if not key.key.placeholders:
            yield key.key.source
            return
        yield from _placeholder_values(compiled, rule, key.key)
    elif ref.jsonpath is not None:
        found = ref.jsonpath.steps
        if found is not None and len(found) > len(steps) and list(found[:len(steps)]) == steps \
                and isinstance(found[len(steps)], str):
            yield found[len(steps)]


def _placeholder_values(compiled: CompiledSpec, rule, template) -> Iterator[Any]:
    """The values of a key that is exactly one placeholder ``{it.field}`` of the rule's
    iteration chain, where ``it`` runs over the constants."""
    placeholder = template.single  # the key is exactly one placeholder (parsed)
    if placeholder is None or placeholder.reference or placeholder.meta is not None:
        return
    iteration = compiled.iterations.get(placeholder.name)
    if iteration is None or iteration.over.target != "constants" \
            or iteration.over.jsonpath is None:
        return
    if rule.for_each is None or placeholder.name not in compiled.iterations[rule.for_each].chain:
        return
    for element in iteration.over.jsonpath.values(compiled.constants):
        found, value = member_at(element, placeholder.members, digits_index=True)
        if found and isinstance(value, str):
            yield value
