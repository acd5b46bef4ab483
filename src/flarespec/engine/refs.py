"""References: ``target:selector`` strings that name places in documents, bindings or constants.

* ``index:$.shelves[*].name``   a JSONPath over the document ``index``
* ``stock:/shelves/{shelf@index}/items/{item@index}``   a pointer template
* ``stock:@sha256``   metadata of a document's file (``sha256``, ``path``, ``size``)
* ``item:@index``   the position of the current element of an iteration (``index``, ``label``)
* ``shelf:$.name``   the current element of the iteration ``shelf``
* ``constants:/colours/[name={item.colour}]/code``   the spec's constants

A bare ``target`` means its whole value (``target:$``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from flarespec.engine.paths import (
    CompiledJsonPath,
    PathSyntaxError,
    PointerTemplate,
    compile_pointer,
)

DOCUMENT_METADATA = ("sha256", "path", "size")
BINDING_METADATA = ("index", "label")
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

    def __str__(self) -> str:
        return self.source

    @property
    def placeholders(self) -> tuple[str, ...]:
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

    def __repr__(self) -> str:
        return f"{{'ref': {self.ref.source!r}}}"


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
        return f"{{'template': {self.template.source!r}}}"
