"""Selections into JSON-like values: JSONPath (compiled once), pointer templates and locations.

A spec names places in documents in two ways:

* a JSONPath (``$.groups[*].id``) selects zero or more places. It is flarespec's own
  written subset of RFC 9535 (:mod:`flarespec.engine.jsonpath`): parsed once, at spec load,
  every construct with its RFC meaning or refused there with a message naming it; one walker
  applies it (a plain path such as ``$.a.b[0]`` is a loop without per-step allocation).
* a pointer template (``/shelves/{shelf@index}/items/{item@index}``) addresses one
  place whose keys depend on the current iteration. Segments are split once; only the
  ``{...}`` placeholders are filled per binding, so nothing is re-parsed per element. A
  segment ``[key=value]`` picks the first list element whose ``key`` equals ``value``.

Every match carries its location as a normalised JSONPath string (``$.a['b.c'][0]``), which
is what violations report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from flarespec.engine.jsonpath import (  # noqa: F401 - the public names of this module
    INDEX,
    WILDCARD,
    CompiledJsonPath,
    Match,
    PathSyntaxError,
    child_location,
    parse_jsonpath,
)

# --------------------------------------------------------------------------- pointers

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_FILTER_SEGMENT = re.compile(r"^\[([^=\]]+)=(.*)\]$")


@dataclass(frozen=True)
class Template:
    """A string with ``{placeholder}`` parts, split once. A template that is all literal, or
    one placeholder alone (``{item@index}``: most pointer segments), renders without a join."""

    source: str
    parts: tuple  # str literals and Placeholder objects, alternating
    literal: str | None = field(init=False, compare=False, repr=False)
    single: str | None = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        placeholders = self.placeholders
        object.__setattr__(self, "literal", None if placeholders else "".join(self.parts))
        object.__setattr__(self, "single", placeholders[0]
                           if len(self.parts) == 1 and placeholders else None)

    @property
    def placeholders(self) -> tuple[str, ...]:
        return tuple(p.text for p in self.parts if isinstance(p, _Placeholder))

    def render(self, fill: Callable[[str], Any]) -> str:
        if self.literal is not None:
            return self.literal
        if self.single is not None:
            return str(fill(self.single))
        return "".join(str(fill(p.text)) if isinstance(p, _Placeholder) else p for p in self.parts)


def compile_template(source: str) -> Template:
    parts: list = []
    position = 0
    for found in _PLACEHOLDER.finditer(source):
        if found.start() > position:
            parts.append(source[position:found.start()])
        parts.append(_Placeholder(found.group(1).strip()))
        position = found.end()
    if position < len(source):
        parts.append(source[position:])
    literal = "".join(p for p in parts if isinstance(p, str))
    if "{" in literal or "}" in literal:
        raise PathSyntaxError(f"unbalanced braces in template {source!r}")
    return Template(source, tuple(parts))


@dataclass(frozen=True, slots=True)
class _Placeholder:
    """A placeholder's inner text, e.g. ``group.id`` or ``packet:$.run``."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Segment:
    key: Template
    filter_value: Template | None = None  # set for a "[key=value]" segment


@dataclass(frozen=True)
class PointerTemplate:
    source: str
    segments: tuple[Segment, ...]
    # True when some segment has a placeholder, i.e. ``fill`` is ever called
    dynamic: bool = field(init=False, compare=False, repr=False)

    @property
    def placeholders(self) -> tuple[str, ...]:
        found: list[str] = []
        for segment in self.segments:
            found.extend(segment.key.placeholders)
            if segment.filter_value is not None:
                found.extend(segment.filter_value.placeholders)
        return tuple(found)

    def __post_init__(self):
        object.__setattr__(self, "dynamic", bool(self.placeholders))

    def find(self, value: Any, fill: Callable[[str], Any] | None, base: "str | Match" = "$"
             ) -> list[Match]:
        start = base if isinstance(base, Match) else Match(value, base)
        keys: list = list(start._keys)
        found = self._walk(value, fill, keys)
        return [] if found is _MISSING else [Match(found, start._base, tuple(keys))]

    def values(self, value: Any, fill: Callable[[str], Any] | None) -> list:
        """The value the pointer names, as a list of one, or []; no match is built."""
        found = self._walk(value, fill, None)
        return [] if found is _MISSING else [found]

    def _walk(self, value: Any, fill, keys: list | None) -> Any:
        """The value at the pointer (``_MISSING`` when nothing is there); the keys walked
        are appended to ``keys`` unless it is None."""
        for segment in self.segments:
            if segment.filter_value is not None:
                field_name = segment.key.render(fill)
                wanted = segment.filter_value.render(fill)
                if not isinstance(value, list):
                    return _MISSING
                for step, item in enumerate(value):
                    if isinstance(item, dict) and item.get(field_name) == wanted:
                        value = item
                        break
                else:
                    return _MISSING
            else:
                step = segment.key.render(fill)
                if isinstance(value, dict):
                    if step not in value:
                        return _MISSING
                    value = value[step]
                elif isinstance(value, list):
                    if not INDEX.fullmatch(step):
                        return _MISSING
                    index = int(step)
                    if not -len(value) <= index < len(value):
                        return _MISSING
                    step = index % len(value)
                    value = value[step]
                else:
                    return _MISSING
            if keys is not None:
                keys.append(step)
        return value


_MISSING = object()


def compile_pointer(source: str) -> PointerTemplate:
    if not source.startswith("/"):
        raise PathSyntaxError(f"a pointer starts with '/': {source!r}")
    segments = []
    for raw in source[1:].split("/") if source != "/" else []:
        raw = raw.replace("~1", "/").replace("~0", "~")
        found = _FILTER_SEGMENT.match(raw)
        if found:
            segments.append(Segment(compile_template(found.group(1)), compile_template(found.group(2))))
        else:
            segments.append(Segment(compile_template(raw)))
    return PointerTemplate(source, tuple(segments))
