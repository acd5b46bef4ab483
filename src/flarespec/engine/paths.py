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
is what violations report (written by loaders/locations.py, the one location syntax). A
file read outside a spec (``flarespec path``) is loaded by loaders/by_name.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from flarespec.engine.readers import INDEX, fixed_reader
from flarespec.engine.placeholders import Placeholder, parse_placeholder
from flarespec.engine.jsonpath import (  # noqa: F401 - the public names of this module
    MAX_SEGMENTS,
    WILDCARD,
    CompiledJsonPath,
    Match,
    PathSyntaxError,
    parse_jsonpath,
    shown_path,
)

# --------------------------------------------------------------------------- pointers

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_FILTER_SEGMENT = re.compile(r"^\[([^=\]]+)=(.*)\]$")


@dataclass(frozen=True)
class Template:
    """A string with ``{placeholder}`` parts, split once. A template that is all literal, or
    one placeholder alone (``{item@index}``: most pointer segments), renders without a join."""

    source: str
    parts: tuple  # literal texts (str) and Placeholder objects (engine/placeholders.py)
    literal: str | None = field(init=False, compare=False, repr=False)
    single: Placeholder | None = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        placeholders = self.placeholders
        object.__setattr__(self, "literal", None if placeholders else "".join(self.parts))
        object.__setattr__(self, "single", placeholders[0]
                           if len(self.parts) == 1 and placeholders else None)

    @property
    def placeholders(self) -> tuple[Placeholder, ...]:
        return tuple(p for p in self.parts if isinstance(p, Placeholder))

    def render(self, fill: Callable[[Placeholder], Any]) -> str:
        if self.literal is not None:
            return self.literal
        if self.single is not None:
            return str(fill(self.single))
        return "".join(str(fill(p)) if isinstance(p, Placeholder) else p for p in self.parts)


def compile_template(source: str) -> Template:
    """The template ``source``, its placeholders parsed (engine/placeholders.py: one that is
    none of the forms is a PathSyntaxError here, at spec load)."""
    pieces = _PLACEHOLDER.split(source)  # literal texts and placeholders' inner texts, alternating
    if any("{" in text or "}" in text for text in pieces[::2]):
        raise PathSyntaxError(f"unbalanced braces in template {source!r}")
    parts = [parse_placeholder(text) if position % 2 else text
             for position, text in enumerate(pieces)]
    return Template(source, tuple(part for part in parts if part))


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
    _steps: tuple = field(init=False, compare=False, repr=False)
    # for a pointer of literal keys alone (no placeholder, no filter): (text, index or None)
    # per segment, walked by ``values`` without the general step's dispatch; else None
    _fixed: tuple | None = field(init=False, compare=False, repr=False)

    @property
    def placeholders(self) -> tuple[Placeholder, ...]:
        found: list[Placeholder] = []
        for segment in self.segments:
            found.extend(segment.key.placeholders)
            if segment.filter_value is not None:
                found.extend(segment.filter_value.placeholders)
        return tuple(found)

    def __post_init__(self):
        object.__setattr__(self, "dynamic", bool(self.placeholders))
        # per segment, worked out once: (literal text, its index when it reads as one, the
        # one placeholder it consists of, None), or (None, None, None, the segment) for a
        # filter segment or a key mixing text and placeholders
        object.__setattr__(self, "_steps", tuple(_key_step(segment) or (None, None, None, segment)
                                                 for segment in self.segments))
        literal = all(single is None and segment is None
                      for _, _, single, segment in self._steps)
        object.__setattr__(self, "_fixed", tuple((text, number) for text, number, _, _
                                                 in self._steps) if literal else None)

    def find(self, value: Any, fill: Callable[[str], Any] | None, base: "str | Match" = "$"
             ) -> list[Match]:
        start = base if isinstance(base, Match) else Match(value, base)
        keys: list = list(start._keys)
        found = self._walk(value, fill, keys)
        return [Match(found[0], start._base, tuple(keys))] if found else []

    def _walk(self, value: Any, fill, keys: list | None = None) -> list:
        """The value at the pointer as a list of one, or [] when nothing is there; the keys
        walked are appended to ``keys`` unless it is None. A placeholder that fills in an
        integer (``{item@index}``) indexes a list as that integer and names an object's
        member by its decimal text, exactly as the rendered text would."""
        for text, number, single, segment in self._steps:
            if segment is not None:  # a filter segment, or a key mixing text and placeholders
                if segment.filter_value is not None:
                    value, step = _filtered(value, segment, fill)
                    if value is _MISSING:
                        return []
                    if keys is not None:
                        keys.append(step)
                    continue
                text = segment.key.render(fill)
            elif single is not None:
                filled = fill(single)
                if type(filled) is int:  # its text is made only if it names a member
                    text, number = None, filled
                else:
                    text = str(filled)
            if isinstance(value, dict):
                if text is None:
                    text = str(number)
                if text not in value:
                    return []
                value = value[text]
                if keys is not None:
                    keys.append(text)
            elif isinstance(value, list):
                if number is None:
                    if not INDEX.fullmatch(text):
                        return []
                    number = int(text)
                size = len(value)
                if not -size <= number < size:
                    return []
                value = value[number]
                if keys is not None:
                    keys.append(number % size)
            else:
                return []
        return [value]

    # ``values(value, fill)``: the value the pointer names, as a list of one, or []; no
    # match is built (the walk itself, called without keys)
    values = _walk

    def reader(self) -> Callable[[Any, Any], list]:
        """``values`` as fast as this pointer allows, chosen once by its compiled reader
        (an accessor's): ``_walk`` itself, or for a pointer of literal keys alone
        (``/json/choices/0/text``) its generated reader (engine/readers.py)."""
        steps = self.fixed_steps()
        return self._walk if steps is None else fixed_reader(steps)

    def fixed_steps(self) -> tuple | None:
        """The steps (engine/readers.py) of a pointer of literal keys alone: each segment
        reads an object's member by its text and a list's element by the index the text
        reads as (if it reads as one), as ``_walk`` takes a literal step; else None."""
        return None if self._fixed is None else tuple(self._fixed)

    def split_at_index(self) -> tuple[str, Callable[[Any], list], Callable[[Any, int], list]] | None:
        """For a pointer of literal keys ending in one placeholder (``/events/{item@index}``):
        (that placeholder, ``prefix(value)``: ``values`` of the literal keys, ``step(container,
        index)``: ``values`` of the last segment filled with the integer ``index``), so that
        ``values(value, fill)`` is ``step(prefix(value)[0], fill(placeholder))`` when the
        prefix finds its value and [] when not. A caller reads the prefix once for many
        indices (an element plan: once per parent). None for any other pointer."""
        split = self._split_at_index()
        if split is None:
            return None
        single, prefix = split
        return single, prefix.reader(), _index_step

    def filled_steps(self) -> tuple | None:
        """For generated code, the steps of a pointer whose every segment is a literal key
        or one placeholder (``/shelves/{shelf@index}/items/{item@index}``): a
        literal key's fixed step (engine/readers.py), a placeholder as its ``Placeholder``,
        whose step ``_walk`` takes by the value it is filled with (``readers.by_filled``);
        None for any other pointer (a filter, a key mixing text and placeholders)."""
        if any(segment is not None for *_, segment in self._steps):
            return None
        return tuple((text, number) if single is None else single
                     for text, number, single, _ in self._steps)

    def _split_at_index(self) -> tuple[str, "PointerTemplate"] | None:
        *head, (_, _, single, segment) = self._steps
        if single is None or segment is not None or any(
                placeholder is not None or other is not None for _, _, placeholder, other in head):
            return None
        return single, PointerTemplate(self.source, self.segments[:-1])


def _index_step(value: Any, number: int) -> list:
    """``_walk``'s step for a placeholder filled with the integer ``number``, on its own: a
    list's element at that index when in range, an object's member named by its decimal
    text."""
    if isinstance(value, dict):
        text = str(number)
        return [value[text]] if text in value else []
    if isinstance(value, list) and -len(value) <= number < len(value):
        return [value[number]]
    return []


def _key_step(segment: Segment) -> tuple | None:
    if segment.filter_value is not None:
        return None
    template = segment.key
    if template.literal is not None:
        literal = template.literal
        return literal, int(literal) if INDEX.fullmatch(literal) else None, None, None
    if template.single is not None:
        return None, None, template.single, None
    return None


def _filtered(value: Any, segment: Segment, fill) -> tuple[Any, int | None]:
    """A ``[field=value]`` segment: the first object of a list whose field is the text."""
    field_name = segment.key.render(fill)
    wanted = segment.filter_value.render(fill)
    if isinstance(value, list):
        for step, item in enumerate(value):
            if isinstance(item, dict) and item.get(field_name) == wanted:
                return item, step
    return _MISSING, None


_MISSING = object()


def compile_pointer(source: str) -> PointerTemplate:
    if not source.startswith("/"):
        raise PathSyntaxError(f"a pointer starts with '/': {source!r}")
    if source.count("/") > MAX_SEGMENTS:
        raise PathSyntaxError(f"a pointer has at most {MAX_SEGMENTS} segments; "
                              f"{shown_path(source)} has {source.count('/'):,}")
    segments = []
    for raw in source[1:].split("/") if source != "/" else []:
        raw = raw.replace("~1", "/").replace("~0", "~")
        found = _FILTER_SEGMENT.match(raw)
        if found:
            segments.append(Segment(compile_template(found.group(1)), compile_template(found.group(2))))
        else:
            segments.append(Segment(compile_template(raw)))
    return PointerTemplate(source, tuple(segments))


# --------------------------------------------------------------------------- output

def json_text(value: Any, indent: str = "  ") -> str:
    """``value`` as indented JSON text, without recursion (values nest thousands deep).
    Numbers are written exactly: an int in full, a float as Python's shortest repr, a
    Decimal (the Prometheus loader's exact values) as the decimal it holds; JSON has no NaN
    or infinity, so those are written as the strings "NaN", "+Inf" and "-Inf"."""
    import json
    from decimal import Decimal

    out: list[str] = []
    pending: list = [(value, 0, False)]  # (item, level, is literal text)
    while pending:
        item, level, literal = pending.pop()
        if literal:
            out.append(item)
        elif isinstance(item, (list, dict)) and item:
            is_dict = isinstance(item, dict)
            inner = "\n" + indent * (level + 1)
            pending.append(("\n" + indent * level + ("}" if is_dict else "]"), 0, True))
            entries = list(item.items()) if is_dict else list(enumerate(item))
            for position in range(len(entries) - 1, -1, -1):
                key, child = entries[position]
                pending.append((child, level + 1, False))
                head = ("," if position else "") + inner
                if is_dict:
                    head += json.dumps(str(key), ensure_ascii=False) + ": "
                pending.append((head, 0, True))
            pending.append(("{" if is_dict else "[", 0, True))
        elif isinstance(item, (list, dict)):
            out.append("{}" if isinstance(item, dict) else "[]")
        elif item is None or isinstance(item, bool):
            out.append("null" if item is None else "true" if item else "false")
        elif isinstance(item, int):
            out.append(int.__repr__(item))
        elif isinstance(item, (float, Decimal)):
            if item != item:
                out.append('"NaN"')
            elif item in (float("inf"), float("-inf")):
                out.append('"+Inf"' if item > 0 else '"-Inf"')
            else:
                out.append(float.__repr__(item) if isinstance(item, float) else str(item))
        else:
            out.append(json.dumps(item if isinstance(item, str) else str(item),
                                  ensure_ascii=False))
    return "".join(out)
