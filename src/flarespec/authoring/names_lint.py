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
so a missed case rejects; lint says it before any packet does). One issue per name and
place, naming every rule that reads it, at the line that spells the name (a constant's
entry, else the rule's argument), with the required name meant and where it is spelled
(``related``): the name a file renamed at that entry, else a literal a child wrote where its
parent reads that entry (``${names.done}``), else the closest spelling: the two
lines that disagree (lint's blame_overrides moves the issue to
the one in the linted file when the other is a parent's).
"""

from __future__ import annotations

import difflib
from typing import Any, Iterator

from flarespec.authoring.shape_lint import reference_steps
from flarespec.engine.hooks import HOOKS
from flarespec.engine.refs import ArgRef, Ref
from flarespec.compiler.compile import CompiledSpec
from flarespec.compiler.errors import ERROR, SpecIssue
from flarespec.compiler.tokens import find_tokens
from flarespec.compiler.yamlmarks import marked_strings

NAME_NOT_REQUIRED = "spec.name-not-required"


def name_issues(compiled: CompiledSpec) -> list[SpecIssue]:
    data = compiled.resolved.data
    sources = {rule.get("id"): rule for rule in data.get("rules") or []}
    unrequired: dict = {}  # (name, document, steps) -> (required, [(rule id, argument, mark)])
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
                    readers = unrequired.setdefault((name, place[0], tuple(place[1])),
                                                    (required, []))[1]
                    readers.append((rule.id, naming, _argument_mark(sources.get(rule.id),
                                                                    naming)))
    return [_issue(compiled, name, document, list(steps), required, readers)
            for (name, document, steps), (required, readers) in unrequired.items()]


def _issue(compiled: CompiledSpec, name: str, document: str, steps: list, required: set,
           readers: list) -> SpecIssue:
    data = compiled.resolved.data
    by = ", ".join(f"{rule_id!r} ({naming})" for rule_id, naming, _ in readers)
    close = _renamed_from(compiled, name, required) or \
        difflib.get_close_matches(name, sorted(required), n=1)
    close_at = _spelled_at(data, close[0]) if close else None
    meant = f"; did you mean {close[0]!r}{f' (at {close_at})' if close_at else ''}?" \
        if close else ""
    return SpecIssue(
        f"{name!r} is read from {document}:{_shown(steps)} by rule"
        f"{'s' * (len(readers) != 1)} {by}, but no rule or shape of the spec requires it "
        f"there (required there: {', '.join(sorted(required)) or 'nothing'}){meant} a "
        f"renamed name must be renamed everywhere", _spelled_at(data, name) or readers[0][2],
        NAME_NOT_REQUIRED, ERROR, related=(close_at,) if close_at else ())


def _renamed_from(compiled: CompiledSpec, name: str, required: set) -> list[str]:
    """The required name a spec file of the chain gives the constant entry that spells
    ``name``: what a child renamed (``counters.completed`` was ``..._completed_total``);
    else the one a child wrote where a file of the chain reads that entry."""
    constants = compiled.resolved.data.get("constants")
    strings = dict(_constant_strings(constants))
    paths = [path for path, text in strings.items() if text == name]
    for layer in compiled.resolved.chain:
        for path in paths:
            value = layer.data.get("constants")
            for step in path:
                ok = isinstance(value, dict) and step in value or \
                    isinstance(value, list) and isinstance(step, int) and step < len(value)
                value = value[step] if ok else None
            if isinstance(value, str) and value != name and value in required:
                return [value]
    return _reference_replaced(compiled, paths, name, required, strings)


def _reference_replaced(compiled: CompiledSpec, paths: list, name: str, required: set,
                        strings: dict) -> list[str]:
    """The required name now at a constant entry that a parent writes as exactly the
    reference to the entry spelling ``name`` (an item ``{name: "${names.done}"}`` of a
    list), when the parent does not spell it: a child restated the list with a literal
    there (``{name: finished_total}``) and kept the constant it read."""
    dotted = {".".join(map(str, path)) for path in paths}
    for layer in compiled.resolved.chain[1:]:
        written = dict(_constant_strings(layer.data.get("constants")))
        spelled = set(written.values())
        for path, text in written.items():
            read = [token for token in find_tokens(text) if token.expression is None]
            value = strings.get(path)
            if len(read) == 1 and read[0].text == text and read[0].filter is None \
                    and read[0].name in dotted and value != name and value in required \
                    and value not in spelled:
                return [value]
    return []


def _constant_strings(value) -> Iterator[tuple[tuple, str]]:
    """(path, string) of every string inside the constants."""
    stack: list = [((), value)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((path + (key,), item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((path + (index,), item) for index, item in enumerate(value))
        elif isinstance(value, str):
            yield path, value


def _argument_mark(source, naming: str):
    """Where a rule's argument is written (the rule's, without one)."""
    args = source.get("args") if isinstance(source, dict) else None
    return getattr(args, "key_marks", {}).get(naming) or getattr(source, "mark", None)


def _spelled_at(data, name: str):
    """Where the spec spells ``name``: a string of its constants, else a member of a shape
    (the key): each in the file that wrote it."""
    constants = data.get("constants")
    for text, mark in marked_strings(constants, getattr(data, "key_marks", {}).get("constants")):
        if text == name and mark is not None:
            return mark
    stack = [data.get("shapes")]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            members = node.get("members")
            if isinstance(members, dict) and name in members:
                return getattr(members, "key_marks", {}).get(name)
            stack.extend(node.values())
    return None


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
        found, value = placeholder.member_of(element)
        if found and isinstance(value, str):
            yield value
