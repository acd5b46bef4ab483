"""References: ``target:selector`` strings that name places in documents, bindings or constants.

* ``index:$.shelves[*].name``   a JSONPath over the document ``index``
* ``stock:/shelves/{shelf@index}/items/{item@index}``   a pointer template
* ``stock:@sha256``   metadata of a document's file (``sha256``, ``path``, ``size``)
* ``item:@index``   the position of the current element of an iteration (``index``, ``label``)
* ``shelf:$.name``   the current element of the iteration ``shelf``
* ``constants:/colours/[name={item.colour}]/code``   the spec's constants
* ``records:$[*].metrics.{metric}.value``   a JSONPath naming a member by a binding
  (engine/path_templates.py)

A bare ``target`` means its whole value (``target:$``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from flarespec.engine.paths import (
    CompiledJsonPath,
    PathSyntaxError,
    PointerTemplate,
    Template,
    compile_pointer,
)
from flarespec.engine.path_templates import JsonPathTemplate, has_placeholders
from flarespec.engine.placeholders import BINDING_METADATA
from flarespec.loaders.locations import next_step, relative_location  # noqa: F401 (re-exported)

DOCUMENT_METADATA = ("sha256", "path", "size")
METADATA = DOCUMENT_METADATA + BINDING_METADATA
_TARGET = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?::(.*))?$", re.S)


@dataclass(frozen=True)
class Ref:
    source: str
    target: str
    jsonpath: CompiledJsonPath | None = None
    pointer: PointerTemplate | None = None
    metadata: str | None = None
    pinned: dict = field(default_factory=dict)  # iteration name -> element index
    template: JsonPathTemplate | None = None  # a JSONPath with .{placeholder} segments

    def __str__(self) -> str:
        return self.source

    @property
    def placeholders(self) -> tuple:  # engine/placeholders.py's Placeholder objects
        if self.template is not None:
            return self.template.placeholders
        return self.pointer.placeholders if self.pointer else ()


def compile_ref(source: str, pinned: dict | None = None) -> Ref:
    if not isinstance(source, str):
        raise PathSyntaxError(f"a reference is a string 'target:selector', got {source!r}")
    found = _TARGET.match(source.strip())
    if not found:
        raise PathSyntaxError(f"a reference looks like 'document:$.path', got {source!r}")
    target, selector = found.group(1), (found.group(2) or "$").strip()
    pinned = dict(pinned or {})
    if selector.startswith("$"):
        if has_placeholders(selector):
            return Ref(source, target, template=JsonPathTemplate(selector), pinned=pinned)
        return Ref(source, target, jsonpath=CompiledJsonPath(selector), pinned=pinned)
    if selector.startswith("/"):
        return Ref(source, target, pointer=compile_pointer(selector), pinned=pinned)
    if selector.startswith("@"):
        name = selector[1:]
        if name not in METADATA:
            raise PathSyntaxError(f"unknown metadata {selector!r} in {source!r}; known: "
                                  + ", ".join("@" + m for m in METADATA))
        return Ref(source, target, metadata=name, pinned=pinned)
    raise PathSyntaxError(f"a selector starts with '$' (JSONPath), '/' (pointer) or '@' "
                          f"(file metadata): {source!r}")


@dataclass(frozen=True)
class ArgRef:
    """An argument value read per binding: {ref: "doc:$.x", default: ..., all: true, at: {...}}."""

    ref: Ref
    all: bool = False
    has_default: bool = False
    default: Any = None

    def __repr__(self) -> str:  # as a spec author wrote it, in messages about arguments
        return f"{{ref: {json.dumps(self.ref.source, ensure_ascii=False)}}}"


@dataclass(frozen=True)
class Condition:
    """{given: ref, <kind>: arg}: true when the selection is non-empty and the kind holds."""

    given: Ref
    kind: Any
    arg: Any
    source: dict


@dataclass(frozen=True)
class ArgTemplate:
    """An argument rendered per binding: {template: "r{group.repetition}.seed"} -> a string."""

    template: Any

    def __repr__(self) -> str:
        return f"{{template: {json.dumps(self.template.source, ensure_ascii=False)}}}"


# --------------------------------------------------------------------------- for messages
# What a person reads: references with their placeholders filled, and where inside an
# argument an expected value was read. Used on failure paths only.

# what a rule's `message` template may name besides bindings and references
MESSAGE_FIELDS = ("detail", "expected", "actual", "file", "location", "line",
                  "expected_file", "expected_location", "expected_line")


def shown_ref(ref: Ref, fill) -> str:
    """The reference as written, with each ``{placeholder}`` replaced by its value for the
    current binding where ``fill`` can give one (else left as written), and pins spelled."""
    text = ref.source.strip()
    if ref.pointer is not None and ref.placeholders:
        def safe(placeholder: str):
            try:
                return fill(placeholder)
            except Exception:  # a message must not fail because a placeholder cannot fill
                return "{" + placeholder + "}"
        segments = []
        for segment in ref.pointer.segments:
            key = segment.key.render(safe)
            if segment.filter_value is not None:
                key = f"[{key}={segment.filter_value.render(safe)}]"
            segments.append(key)
        text = f"{ref.target}:/" + "/".join(segments)
    if ref.pinned:
        text += " (at " + ", ".join(f"{name}: {at}" for name, at in ref.pinned.items()) + ")"
    return text


def first_step(suffix: str) -> tuple[Any, str] | None:
    """The first key or index of a relative location and the rest (``.a[0]`` -> ``a``, ``[0]``);
    the location syntax is flarespec.loaders.locations' (``relative_location`` comes from there)."""
    step = next_step(suffix)
    if step is None:
        return None
    key, end = step
    return key, suffix[end:]


def single_refs(arg: Any) -> list[ArgRef]:
    """Every ``{ref}`` (without ``all``) inside an argument, outside conditions."""
    found: list[ArgRef] = []
    stack = [arg]
    while stack:
        item = stack.pop()
        if isinstance(item, ArgRef):
            if not item.all:
                found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def expected_ref(arg: Any, suffix: str) -> tuple[ArgRef, str] | None:
    """The ``{ref}`` an expected value was read from, and where inside its value.

    ``suffix`` is where the failure lies inside the checked value (``""`` for the value
    itself, ``.text`` for one member). The argument is followed along the suffix while its
    keys match (``includes: {text: {ref}}``); what remains is inside the value of the ref
    found there. An argument holding exactly one ``{ref}`` elsewhere (``same_as: {other:
    {ref}}``) answers for every place; anything else has no single source (None)."""
    while True:
        if isinstance(arg, ArgRef):
            return (None if arg.all else (arg, suffix))
        step = first_step(suffix) if isinstance(arg, (dict, list)) else None
        if step is not None:
            key, rest = step
            if isinstance(arg, dict) and key in arg:
                arg, suffix = arg[key], rest
                continue
            if isinstance(arg, list) and isinstance(key, int) and 0 <= key < len(arg):
                arg, suffix = arg[key], rest
                continue
        refs = single_refs(arg)
        return (refs[0], suffix) if len(refs) == 1 else None


def refs_in(value: Any) -> Iterator[Ref]:
    """Every reference a compiled value reads: a ``Ref`` itself, the references among a
    pointer's placeholders, an argument's ``{ref}``, a condition's, a template's
    (``{doc:$.x}`` placeholders), inside mappings and lists at any depth. The one walker
    of a rule's, a condition's or an argument's references (spec lint's shape checks and
    the engine's schedule read them through it)."""
    pending = [value]
    while pending:
        value = pending.pop()
        if isinstance(value, Ref):
            yield value
            if value.pointer is not None or value.template is not None:
                yield from _placeholder_refs(value.placeholders)
        elif isinstance(value, ArgRef):
            pending.append(value.ref)
        elif isinstance(value, Condition):
            pending += [value.given, value.arg]
        elif isinstance(value, ArgTemplate):
            pending.append(value.template)
        elif isinstance(value, (dict, list, tuple)):
            pending += list(value.values() if isinstance(value, dict) else value)
        elif isinstance(value, Template):
            yield from _placeholder_refs(value.placeholders)


def _placeholder_refs(placeholders) -> Iterator[Ref]:
    for placeholder in placeholders:
        if placeholder.reference:
            try:
                yield compile_ref(placeholder.text)
            except ValueError:  # not a reference after all: spec lint says so elsewhere
                continue
